// SPDX-License-Identifier: GPL-2.0-or-later
import Agent
import Testing

@Suite("Transcript", .timeLimit(.minutes(5)))
struct TranscriptTests {
    private func decode(_ json: String) -> Transcript? { Transcript(jsonBytes: Array(json.utf8)) }

    @Test("the collector's fields")
    func fields() {
        let t = decode(
            #"{"is_final":true,"stream_id":1234,"message_id":"0f1e2d3c","data_type":"transcribe","text_ts":1750000000123,"text":"Hello there","role":"user"}"#
        )
        #expect(
            t
                == Transcript(
                    role: .user, text: "Hello there", isFinal: true, textTS: 1_750_000_000_123, dataType: "transcribe",
                    streamID: 1234))
    }

    @Test("lenient: defaults for what is missing, numbers and strings where others are expected")
    func lenient() {
        #expect(
            decode(#"{"role":"assistant","text":"Hi"}"#)
                == Transcript(
                    role: .assistant, text: "Hi", isFinal: false, textTS: 0, dataType: "transcribe", streamID: nil))
        #expect(decode(#"{"role":"user","text":"a","is_final":1,"text_ts":"17","stream_id":"5"}"#)?.isFinal == true)
        #expect(decode(#"{"role":"user","text":"a","is_final":1,"text_ts":"17","stream_id":"5"}"#)?.textTS == 17)
        #expect(decode(#"{"role":"user","text":"a","text_ts":1.7e12}"#)?.textTS == 1_700_000_000_000)
        #expect(decode(#"{"role":"user","text":"a","text_ts":-5}"#)?.textTS == 0)
        #expect(decode(#"{"role":"assistant","text":"{}","data_type":"raw"}"#)?.dataType == "raw")
    }

    @Test("no role, an unknown role, or no text: not a transcript")
    func rejected() {
        #expect(decode(#"{"text":"x","stream_id":0}"#) == nil)
        #expect(decode(#"{"role":"narrator","text":"x"}"#) == nil)
        #expect(decode(#"{"role":"user"}"#) == nil)
        #expect(decode(#"{"role":"user","text":5}"#) == nil)
        #expect(decode("[]") == nil)
        #expect(decode("not json") == nil)
    }
}
