// SPDX-License-Identifier: GPL-2.0-or-later

/// A time to read `characters` on the glasses' display: 2 s and 50 ms a character, within bounds.
func readingTime(_ characters: Int, least: Duration, most: Duration) -> Duration {
    min(max(.seconds(2) + .milliseconds(50) * characters, least), most)
}
