// SPDX-License-Identifier: GPL-2.0-or-later
import Frame
import Testing

@Suite struct AppMessageTests {
    @Test func photoSettingsDefaults() {
        #expect(PhotoSettings() == PhotoSettings(quality: 2, resolution: 512))
    }
}
