// SPDX-License-Identifier: GPL-2.0-or-later

/// The SMP groups glassd uses, and their commands (Zephyr's smp_group_0 and smp_group_1).
public enum SMPGroup {
    /// Default/OS management: echo 0, reset 5, MCUmgr parameters 6.
    public static let os: UInt16 = 0
    /// Application image management: state 0, upload 1, erase 5.
    public static let image: UInt16 = 1
}

/// An answer that is a well-formed frame but lacks what its command promises.
public struct SMPAnswerError: Error, Sendable, Equatable, CustomStringConvertible {
    public var command: String
    public var problem: String

    public init(_ command: String, _ problem: String) {
        self.command = command
        self.problem = problem
    }

    public var description: String { "the glasses' answer to \(command) \(problem)" }
}

/// What the device says of its SMP buffers (OS command 6). Zephyr answers only when
/// CONFIG_MCUMGR_GRP_OS_MCUMGR_PARAMS is set; otherwise "not supported", and the caller uses
/// its default buffer size (Zephyr's default is 384 bytes).
public enum MCUmgrParameters: Sendable, Equatable {
    case reported(bufferSize: Int, bufferCount: Int)
    case notSupported

    public static func decode(_ payload: CBOR) throws(SMPAnswerError) -> MCUmgrParameters {
        guard let size = payload["buf_size"]?.intValue, size > 0, let count = payload["buf_count"]?.intValue else {
            throw SMPAnswerError("MCUmgr parameters", "has no buf_size and buf_count")
        }
        return .reported(bufferSize: size, bufferCount: count)
    }

    /// The device's buffer size, or `fallback` when it does not say.
    public func bufferSize(or fallback: Int) -> Int {
        if case .reported(let size, _) = self { size } else { fallback }
    }
}

extension SMPClient {
    /// Echo (OS 0): the device returns `text`; a liveness check of the SMP service.
    public func echo(_ text: String, timeout: Duration? = nil) async throws -> String {
        let answer = try await request(.write, group: SMPGroup.os, command: 0, payload: .map(["d": .text(text)]), timeout: timeout)
        guard let echoed = answer.payload["r"]?.textValue else { throw SMPAnswerError("echo", "has no text") }
        return echoed
    }

    /// Reset (OS 5). The device answers, then restarts (MCUboot then swaps in a pending image);
    /// the link drops soon after. `force` asks it to reset even if an application hook objects.
    public func reset(force: Bool = false, timeout: Duration? = nil) async throws {
        _ = try await request(
            .write, group: SMPGroup.os, command: 5, payload: force ? .map(["force": .bool(true)]) : .map([]), timeout: timeout)
    }

    /// MCUmgr parameters (OS 6): `.notSupported` when the device answers MGMT_ERR_ENOTSUP.
    public func mcumgrParameters(timeout: Duration? = nil) async throws -> MCUmgrParameters {
        do {
            return try MCUmgrParameters.decode(try await request(.read, group: SMPGroup.os, command: 6, timeout: timeout).payload)
        } catch let error as SMPError where error.isNotSupported {
            return .notSupported
        }
    }
}
