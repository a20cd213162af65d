'''glassd's notification methods (and SetNextEvent), for python-dbusmock (--template): a stand-in glassd for
glassctl notify-agent's tests. Each call is recorded (GetCalls, and the MethodCalled signal).
'''
# SPDX-License-Identifier: GPL-2.0-or-later

BUS_NAME = 'org.glassd'
MAIN_OBJ = '/org/glassd'
MAIN_IFACE = 'org.glassd.Manager1'
SYSTEM_BUS = True


def load(mock, parameters):
    mock.next_id = 1
    mock.AddMethods(MAIN_IFACE, [
        ('Notify', 'a{sv}', 'u', 'ret = self.next_id\nself.next_id += 1'),
        ('CloseNotification', 'u', '', ''),
        ('SetNextEvent', 'a{sv}', '', ''),
    ])
