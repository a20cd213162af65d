// SPDX-License-Identifier: GPL-2.0-or-later
@testable import Product
import Testing

@Suite("Scene answers", .timeLimit(.minutes(5)))
struct SceneAnswerTests {
    @Test("CAUTION with a hazard and a direction, or CLEAR, from the first line; anything else is no answer", arguments: [
        ("CAUTION step ahead", "CAUTION step ahead"), ("caution: open manhole left.", "CAUTION open manhole left"),
        ("**CAUTION bicycle right**\nIt is close.", "CAUTION bicycle right"), ("CLEAR", "CLEAR"), ("Clear.", "CLEAR"),
        ("  clear  ", "CLEAR"), ("CAUTION", nil), ("CAUTION step", nil), ("The path looks clear", nil), ("", nil),
        ("CLEAR but watch out", nil),
    ] as [(String, String?)])
    func parse(answer: String, state: String?) {
        #expect(SceneWatch.hazardState(answer) == state)
    }
}
