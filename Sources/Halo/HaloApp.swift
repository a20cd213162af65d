// SPDX-License-Identifier: GPL-2.0-or-later
import Frame
import Glasses

extension FrameApp {
    /// glassd's app for a Halo: the Frame's app with the Halo's hardware file (Sources/Halo/App).
    public static let halo = FrameApp(bundled: FrameApp.bundled, hardware: PackageResources.glassd_hw_lua)
}
