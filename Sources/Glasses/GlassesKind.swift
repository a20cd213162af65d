// SPDX-License-Identifier: GPL-2.0-or-later

/// Which kind of glasses a device is (org.glassd.Device1.Kind; the spelling is the contract).
public enum GlassesKindName: String, Sendable, CaseIterable {
    case monocle, frame, halo
}
