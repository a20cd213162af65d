// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import Foundation
import Skills
import Testing

@Suite("Unit skill", .timeLimit(.minutes(5)))
struct UnitSkillTests {
    @Test("conversions to four significant digits", arguments: [
        ("convert 5 miles to km", 8.047, "km"), ("5 mi in kilometres", 8.047, "km"),
        ("what is 100 fahrenheit in celsius", 37.78, "°C"), ("72 °F to °C", 22.22, "°C"), ("72°f to °c", 22.22, "°C"),
        ("100 degrees fahrenheit in degrees celsius", 37.78, "°C"), ("-40 c to f", -40, "°F"),
        ("minus forty degrees celsius in fahrenheit", -40, "°F"), ("0 celsius to kelvin", 273.2, "K"), ("convert 100 kelvin to celsius", -173.2, "°C"),
        ("how many feet in 3 meters", 9.843, "ft"), ("how many feet are there in 3 metres", 9.843, "ft"),
        ("convert 3 m to ft", 9.843, "ft"), ("10 kg in pounds", 22.05, "lb"), ("how many pounds is 10 kg", 22.05, "lb"),
        ("1 gal to l", 3.785, "l"), ("how many litres in a gallon", 3.785, "l"), ("how many cups in a gallon", 16, "cup"),
        ("10 in in cm", 25.4, "cm"), ("5km to miles", 3.107, "mi"), ("12 fl oz to ml", 354.9, "ml"),
        ("2 pints in millilitres", 946.4, "ml"), ("1 stone in kg", 6.35, "kg"), ("500 mg in grams", 0.5, "g"),
        ("1 quart to cups", 4, "cup"), ("3 yards to feet", 9, "ft"), ("twenty five miles to km", 40.23, "km"),
        ("what is 1,500 metres in miles", 0.9321, "mi"), ("how many ounces in a pound", 16, "oz"),
        ("convert 2.5 litres into cups", 10.57, "cup"),
        ("how many ounces in a cup", 8, "fl oz"), ("8 ounces to ml", 236.6, "ml"),
    ])
    func conversions(question: String, value: Double, unit: String) {
        let answer = LocalSkills().answer(question, context: context())
        #expect(answer?.skill == .units, "\(question)")
        #expect(answer?.answer == TypedAnswer([.number(value: value, unit: unit)]), "\(question)")
    }

    @Test("the text form carries the unit symbol")
    func textForm() {
        #expect(ask("convert 5 miles to km") == "8.047 km")
        #expect(ask("100 °F to °C") == "37.78 °C")
    }

    @Test("different dimensions cannot be converted")
    func incompatible() {
        #expect(ask("convert 5 kg to km") == "Kilograms and kilometres cannot be converted.")
        #expect(ask("how many litres in 3 feet") == "Feet and litres cannot be converted.")
        #expect(ask("20 celsius in grams") == "Degrees Celsius and grams cannot be converted.")
    }
}
