// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// A unit the unit skill converts: its symbol for the answer, its plural for sentences, and how
/// it maps to its dimension's base (metre, kilogram, kelvin, litre): base = (value + offset) * factor.
struct MeasureUnit: Sendable, Equatable {
    enum Dimension: Sendable { case length, mass, temperature, volume }

    var symbol: String
    var plural: String
    var dimension: Dimension
    var factor: Double
    var offset: Double = 0

    func toBase(_ value: Double) -> Double { (value + offset) * factor }
    func fromBase(_ value: Double) -> Double { value / factor - offset }
}

/// Every spelling of every unit; US customary volumes (cup 236.588 ml, pint, quart, gallon).
enum Units {
    static let byName: [String: MeasureUnit] = {
        var table: [String: MeasureUnit] = [:]
        func add(_ unit: MeasureUnit, _ names: [String]) {
            for name in names + [unit.symbol.lowercased(), unit.plural.lowercased()] { table[name] = unit }
        }
        add(.init(symbol: "mm", plural: "millimetres", dimension: .length, factor: 0.001),
            ["millimetre", "millimeter", "millimeters"])
        add(.init(symbol: "cm", plural: "centimetres", dimension: .length, factor: 0.01),
            ["centimetre", "centimeter", "centimeters"])
        add(.init(symbol: "m", plural: "metres", dimension: .length, factor: 1), ["metre", "meter", "meters"])
        add(.init(symbol: "km", plural: "kilometres", dimension: .length, factor: 1000),
            ["kilometre", "kilometer", "kilometers", "kms"])
        add(.init(symbol: "in", plural: "inches", dimension: .length, factor: 0.0254), ["inch"])
        add(.init(symbol: "ft", plural: "feet", dimension: .length, factor: 0.3048), ["foot"])
        add(.init(symbol: "yd", plural: "yards", dimension: .length, factor: 0.9144), ["yard", "yds"])
        add(.init(symbol: "mi", plural: "miles", dimension: .length, factor: 1609.344), ["mile"])

        add(.init(symbol: "mg", plural: "milligrams", dimension: .mass, factor: 1e-6), ["milligram", "milligrammes"])
        add(.init(symbol: "g", plural: "grams", dimension: .mass, factor: 0.001), ["gram", "gramme", "grammes"])
        add(.init(symbol: "kg", plural: "kilograms", dimension: .mass, factor: 1),
            ["kilogram", "kilo", "kilos", "kgs", "kilogramme", "kilogrammes"])
        add(.init(symbol: "oz", plural: "ounces", dimension: .mass, factor: 0.028349523125), ["ounce"])
        add(.init(symbol: "lb", plural: "pounds", dimension: .mass, factor: 0.45359237), ["pound", "lbs"])
        add(.init(symbol: "st", plural: "stone", dimension: .mass, factor: 6.35029318), ["stones"])

        add(.init(symbol: "°C", plural: "degrees Celsius", dimension: .temperature, factor: 1, offset: 273.15),
            ["celsius", "centigrade", "degree celsius", "degrees centigrade", "c", "degrees c", "° c"])
        add(.init(symbol: "°F", plural: "degrees Fahrenheit", dimension: .temperature, factor: 5.0 / 9, offset: 459.67),
            ["fahrenheit", "degree fahrenheit", "f", "degrees f", "° f"])
        add(.init(symbol: "K", plural: "kelvins", dimension: .temperature, factor: 1), ["kelvin"])

        add(.init(symbol: "ml", plural: "millilitres", dimension: .volume, factor: 0.001),
            ["millilitre", "milliliter", "milliliters", "mls"])
        add(.init(symbol: "l", plural: "litres", dimension: .volume, factor: 1), ["litre", "liter", "liters"])
        add(.init(symbol: "cup", plural: "cups", dimension: .volume, factor: 0.236588), [])
        add(.init(symbol: "fl oz", plural: "fluid ounces", dimension: .volume, factor: 0.0295735295625),
            ["fluid ounce", "floz", "fl. oz"])
        add(.init(symbol: "pt", plural: "pints", dimension: .volume, factor: 0.473176473), ["pint"])
        add(.init(symbol: "qt", plural: "quarts", dimension: .volume, factor: 0.946352946), ["quart"])
        add(.init(symbol: "gal", plural: "gallons", dimension: .volume, factor: 3.785411784), ["gallon"])
        return table
    }()

    /// The unit the words name, all of them ("degrees fahrenheit", "fl oz", "km").
    static func named(_ words: ArraySlice<String>) -> MeasureUnit? {
        guard !words.isEmpty, words.count <= 3 else { return nil }
        return byName[words.joined(separator: " ")]
    }
}
