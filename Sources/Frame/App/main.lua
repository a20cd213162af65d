-- glassd's Lua app on a Brilliant Frame: started by the firmware after a reset.
require('glassd_app')
