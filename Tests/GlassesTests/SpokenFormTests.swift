// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import Testing

/// What the speaker says of each kind of answer part: the words, not the display's furniture.
@Suite("Spoken form of typed answers")
struct SpokenFormTests {
    @Test("each kind as a voice says it", arguments: [
        (AnswerPart.text("It is noon."), "It is noon."),
        (.list(title: "Groceries", items: ["milk", "eggs!"]), "Groceries. milk. eggs!"),
        (.table(columns: ["City", "Temp"], rows: [["Oslo", "3 °C"], ["Rome", ""]]), "City Oslo, Temp 3 °C. City Rome."),
        (.link(text: "Eiffel Tower", url: "https://www.toureiffel.paris/en"), "Eiffel Tower"),
        (.link(text: "", url: "https://www.toureiffel.paris/en"), "A link to www.toureiffel.paris."),
        (.link(text: "", url: "not a url at all"), "A link."),
        (.place(name: "Berlin", latitude: 52.52, longitude: 13.405), "Berlin"),
        (.number(value: 42, unit: "km"), "42 km"),
    ])
    func part(part: AnswerPart, spoken: String) {
        #expect(part.spokenForm == spoken)
        if case .link(_, let url) = part { #expect(!part.spokenForm.contains(url)) }
    }

    @Test("an answer's parts on lines of their own, as its text form")
    func answer() {
        let answer = TypedAnswer([.text("Here:"), .link(text: "Docs", url: "https://example.org/docs")])
        #expect(answer.spokenForm == "Here:\nDocs")
        #expect(answer.textForm == "Here:\nDocs (https://example.org/docs)")
    }
}
