// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import DBusKit
import GlassdAPI
import GlassdContract

/// A typed answer as D-Bus carries it (AnswerTyped, AnswerOf): an a{sv} with its main part's
/// fields (the first part that is not text, else the first), `text_form`, `answered_by` (empty:
/// the model) and `parts`, every part as an a{sv} with its `kind`.
enum TypedAnswerBus {
    typealias Fields = GlassdBus.Manager1.TypedAnswerFields

    static func fields(_ answer: TypedAnswer, answeredBy: String?) -> Fields {
        let main = answer.parts.first { $0.kind != "text" } ?? answer.parts.first
        var fields = main.map(part) ?? Fields()
        fields.textForm = answer.textForm.busSafe
        fields.answeredBy = (answeredBy ?? "").busSafe
        fields.parts = answer.parts.map(part)
        return fields
    }

    static func dictionary(_ answer: TypedAnswer, answeredBy: String?) -> DBusValue {
        fields(answer, answeredBy: answeredBy).busValue
    }

    private static func part(_ part: AnswerPart) -> Fields {
        var fields = Fields(kind: part.kind.busSafe)
        switch part {
        case .text(let text):
            fields.text = text.busSafe
        case .list(let title, let items):
            fields.title = title.busSafe
            fields.items = items.map(\.busSafe)
        case .table(let columns, let rows):
            fields.columns = columns.map(\.busSafe)
            fields.rows = rows.map { $0.map(\.busSafe) }
        case .link(let text, let url):
            fields.text = text.busSafe
            fields.url = url.busSafe
        case .place(let name, let latitude, let longitude):
            fields.name = name.busSafe
            fields.latitude = latitude
            fields.longitude = longitude
        case .number(let value, let unit):
            fields.value = value
            fields.unit = unit.busSafe
        }
        return fields
    }
}
