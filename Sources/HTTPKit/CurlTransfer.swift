// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import CCurl
import Glibc

/// One request on its easy handle, from submission to its last byte. Lives on the event loop's
/// thread only; libcurl reaches it through CURLOPT_PRIVATE and the callbacks' userdata.
final class CurlTransfer {
    let id: UInt64
    let easy: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let head: CheckedContinuation<HTTPResponse, any Error>
    private let cancel: @Sendable () -> Void
    private let body: AsyncThrowingStream<[UInt8], any Error>
    private let bodyContinuation: AsyncThrowingStream<[UInt8], any Error>.Continuation
    private var headDelivered = false
    private var headers: [String: String] = [:]
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

    init?(_ submission: CurlHTTPTransport.Submission) {
        guard let easy = curl_easy_init() else {
            submission.head.resume(throwing: HTTPTransportError.invalidRequest("curl_easy_init failed"))
            return nil
        }
        id = submission.id
        self.easy = easy
        head = submission.head
        cancel = submission.cancel
        body = submission.body
        bodyContinuation = submission.bodyContinuation
        errorBuffer.initialize(to: 0)
        configure(submission.request)
    }

    private func configure(_ request: HTTPRequest) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = ccurl_setopt_ptr(easy, CURLOPT_URL, request.url)
        // Only plain HTTP(S): a base URL must never make curl read files or speak other protocols.
        _ = ccurl_setopt_ptr(easy, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = ccurl_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = ccurl_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1)
        _ = ccurl_setopt_long(easy, CURLOPT_TIMEOUT_MS, milliseconds(request.timeout))
        _ = ccurl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, milliseconds(request.connectTimeout))
        _ = ccurl_setopt_ptr(easy, CURLOPT_ERRORBUFFER, errorBuffer)
        _ = ccurl_setopt_ptr(easy, CURLOPT_PRIVATE, me)
        for header in request.headers {
            headerList = curl_slist_append(headerList, "\(header.name): \(header.value)")
        }
        // libcurl asks for "100 Continue" before a body over 1 KiB (a chat request with some
        // history) and holds the body back until the server answers: one round trip more per
        // question for no gain, since every request is small and its body always wanted.
        headerList = curl_slist_append(headerList, "Expect:")
        _ = ccurl_setopt_ptr(easy, CURLOPT_HTTPHEADER, headerList)
        if request.method == "POST" || !request.body.isEmpty {
            // COPYPOSTFIELDS copies, so the body need not outlive this call.
            _ = ccurl_setopt_long(easy, CURLOPT_POSTFIELDSIZE, request.body.count)
            request.body.withUnsafeBytes { _ = ccurl_setopt_ptr(easy, CURLOPT_COPYPOSTFIELDS, $0.baseAddress) }
        }
        if request.method != "POST" && request.method != "GET" {
            _ = ccurl_setopt_ptr(easy, CURLOPT_CUSTOMREQUEST, request.method)
        }
        _ = ccurl_setopt_write(easy, CURLOPT_WRITEFUNCTION, writeCallback)
        _ = ccurl_setopt_ptr(easy, CURLOPT_WRITEDATA, me)
        _ = ccurl_setopt_write(easy, CURLOPT_HEADERFUNCTION, headerCallback)
        _ = ccurl_setopt_ptr(easy, CURLOPT_HEADERDATA, me)
    }

    private func milliseconds(_ d: Duration) -> Int {
        max(1, Int(d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000))
    }

    fileprivate func header(_ line: String) {
        // "\r\n" is one Character (a grapheme), equal to neither "\r" nor "\n": isNewline covers all three.
        let line = line.trimmingSuffix { $0.isNewline }
        if line.hasPrefix("HTTP/") {
            headers = [:]  // a new response (after 100 Continue): start over
        } else if let colon = line.firstIndex(of: ":") {
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            headers[name] = String(value)
        }
    }

    fileprivate func received(_ bytes: UnsafeRawBufferPointer) {
        deliverHead()
        bodyContinuation.yield(Array(bytes))
    }

    private func deliverHead() {
        guard !headDelivered else { return }
        headDelivered = true
        var status = 0
        _ = ccurl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        head.resume(returning: HTTPResponse(status: status, headers: headers, body: body, cancel: cancel))
    }

    /// The transfer ended: with success, libcurl's error, or our cancellation.
    func finish(_ code: CURLcode?) {
        guard let code, code != CURLE_OK else {
            if code == nil { fail(.cancelled) } else { deliverHead(); bodyContinuation.finish() }
            return
        }
        let detail = errorBuffer.pointee != 0 ? String(cString: errorBuffer) : String(cString: curl_easy_strerror(code))
        switch code {
        case CURLE_OPERATION_TIMEDOUT: fail(.timedOut)
        case CURLE_URL_MALFORMAT: fail(.invalidRequest(detail))
        case CURLE_UNSUPPORTED_PROTOCOL:
            // The same code for an unknown scheme and for a reply that is not HTTP ("Received
            // HTTP/0.9 when not allowed"): only the second one connected first.
            var connects = 0
            _ = ccurl_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &connects)
            fail(connects > 0 ? .invalidResponse(detail) : .invalidRequest(detail))
        case CURLE_WEIRD_SERVER_REPLY: fail(.invalidResponse(detail))
        case CURLE_WRITE_ERROR, CURLE_ABORTED_BY_CALLBACK: fail(.cancelled)
        default: fail(.connectionFailed(detail))
        }
    }

    func fail(_ error: HTTPTransportError) {
        if headDelivered {
            bodyContinuation.finish(throwing: error)
        } else {
            headDelivered = true
            head.resume(throwing: error)
            bodyContinuation.finish(throwing: error)
        }
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }
}

private let writeCallback: curl_write_callback = { data, size, count, userdata in
    guard let userdata else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    let total = size * count
    if let data { transfer.received(UnsafeRawBufferPointer(start: data, count: total)) }
    return total
}

private let headerCallback: curl_write_callback = { data, size, count, userdata in
    guard let userdata, let data else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    let total = size * count
    let bytes = UnsafeRawBufferPointer(start: data, count: total)
    transfer.header(String(decoding: bytes, as: UTF8.self))
    return total
}

extension String {
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> String {
        var s = Substring(self)
        while let last = s.last, predicate(last) { s = s.dropLast() }
        return String(s)
    }
}
