// SPDX-License-Identifier: GPL-2.0-or-later
import CCurl
import Foundation

/// `wss://`: libcurl resolves, connects and shakes hands in TLS with CURLOPT_CONNECT_ONLY, checking
/// the server's certificate chain (the system's CAs, or `caFile`) and its name, then keeps the
/// session; the WebSocket's own handshake and frames go over it with curl_easy_send/recv.
/// Chosen over a WebSocket library or libcurl's WebSocket API (still experimental in Debian 12's
/// 7.88): no new dependency, and the byte protocol stays this module's, tested as before.
final class CurlChannel: ByteChannel {
    private let multi: UnsafeMutableRawPointer
    private let easy: UnsafeMutableRawPointer
    /// libcurl writes its error text here for as long as the handle lives.
    private let errorText: UnsafeMutablePointer<CChar>
    let fd: Int32
    var retriesWritesAsIs: Bool { true }

    private static let globalInit: Void = { _ = curl_global_init(Int(CURL_GLOBAL_ALL)) }()

    private init(multi: UnsafeMutableRawPointer, easy: UnsafeMutableRawPointer, errorText: UnsafeMutablePointer<CChar>, fd: Int32) {
        self.multi = multi
        self.easy = easy
        self.errorText = errorText
        self.fd = fd
    }

    /// Connects to `host:port` in TLS by `deadline`, on the calling (socket) thread; `thread`'s
    /// wake-up pipe interrupts the wait, and an abandoned connection gives up. The multi
    /// interface is used for that, and the handle stays in it: libcurl keeps a CONNECT_ONLY
    /// connection there (removing the handle would close it).
    static func connect(
        host: String, port: UInt16, caFile: String?, deadline: ContinuousClock.Instant, thread: SocketThread
    ) -> Result<CurlChannel, WebSocketError> {
        _ = globalInit
        guard let multi = curl_multi_init() else { return .failure(.connectFailed("curl_multi_init failed")) }
        guard let easy = curl_easy_init() else {
            curl_multi_cleanup(multi)
            return .failure(.connectFailed("curl_easy_init failed"))
        }
        let errorText = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorText.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        func fail(_ error: WebSocketError) -> Result<CurlChannel, WebSocketError> {
            curl_multi_remove_handle(multi, easy)
            curl_easy_cleanup(easy)
            curl_multi_cleanup(multi)
            errorText.deallocate()
            return .failure(error)
        }
        let left = max(deadline - .now, .milliseconds(1))
        let url = "https://\(host.contains(":") ? "[\(host)]" : host):\(port)/"
        _ = ccurl_setopt_ptr(easy, CURLOPT_URL, url)
        _ = ccurl_setopt_ptr(easy, CURLOPT_PROTOCOLS_STR, "https")
        _ = ccurl_setopt_long(easy, CURLOPT_CONNECT_ONLY, 1)
        _ = ccurl_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = ccurl_setopt_long(easy, CURLOPT_TCP_NODELAY, 1)
        _ = ccurl_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1)
        _ = ccurl_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2)
        // As the plain socket: straight to the server, whatever proxy the environment names.
        _ = ccurl_setopt_ptr(easy, CURLOPT_PROXY, "")
        _ = ccurl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Int(SocketThread.milliseconds(left)))
        _ = ccurl_setopt_ptr(easy, CURLOPT_ERRORBUFFER, errorText)
        if let caFile { _ = ccurl_setopt_ptr(easy, CURLOPT_CAINFO, caFile) }
        curl_multi_add_handle(multi, easy)
        while true {
            if thread.isAbandoned { return fail(.cancelled) }
            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            var queued: Int32 = 0
            if let message = curl_multi_info_read(multi, &queued), message.pointee.msg == CURLMSG_DONE {
                let code = message.pointee.data.result
                guard code == CURLE_OK else { return fail(error(code, String(cString: errorText))) }
                var socket: Int32 = -1
                guard ccurl_getinfo_socket(easy, CURLINFO_ACTIVESOCKET, &socket) == CURLE_OK, socket >= 0 else {
                    return fail(.connectFailed("libcurl gave no socket"))
                }
                return .success(CurlChannel(multi: multi, easy: easy, errorText: errorText, fd: socket))
            }
            let remaining = deadline - .now
            guard remaining > .zero else { return fail(.timedOut) }
            var wake = curl_waitfd(fd: thread.wakeFDs.read, events: Int16(CURL_WAIT_POLLIN), revents: 0)
            var ready: Int32 = 0
            curl_multi_poll(multi, &wake, 1, min(SocketThread.milliseconds(remaining), 1000), &ready)
            if wake.revents != 0 { thread.drainWakeups() }
        }
    }

    /// libcurl's failure as the connection's: the certificate's own case, so that it reads as
    /// what it is and is never taken for a server that is down.
    private static func error(_ code: CURLcode, _ detail: String) -> WebSocketError {
        let why = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        switch code {
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return .certificateRejected(why)
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_ENGINE_NOTFOUND:
            return .tlsFailed(why)
        case CURLE_OPERATION_TIMEDOUT:
            return .timedOut
        default:
            return .connectFailed(why)
        }
    }

    func send(_ bytes: UnsafeRawBufferPointer) -> ChannelResult {
        var sent = 0
        errorText[0] = 0
        let code = curl_easy_send(easy, bytes.baseAddress, bytes.count, &sent)
        switch code {
        case CURLE_OK: return .done(sent)
        case CURLE_AGAIN: return .wouldBlock
        default: return .failed(failure(code))
        }
    }

    func receive(_ buffer: UnsafeMutableRawBufferPointer) -> ChannelResult {
        var received = 0
        errorText[0] = 0
        let code = curl_easy_recv(easy, buffer.baseAddress, buffer.count, &received)
        switch code {
        case CURLE_OK: return .done(received)
        case CURLE_AGAIN: return .wouldBlock
        default: return .failed(failure(code))
        }
    }

    private func failure(_ code: CURLcode) -> String {
        let detail = String(cString: errorText)
        return detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
    }

    func sendNow(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { send($0) }
    }

    func close() {
        curl_multi_remove_handle(multi, easy)
        curl_easy_cleanup(easy)
        curl_multi_cleanup(multi)
        errorText.deallocate()
    }
}

@available(*, unavailable)
extension CurlChannel: Sendable {}
