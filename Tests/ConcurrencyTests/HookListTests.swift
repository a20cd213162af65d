// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Synchronization
import Testing

@Suite("HookList", .timeLimit(.minutes(5)))
struct HookListTests {
    @Test("every hook added runs on each run, in the order added, and each is awaited before the next")
    func order() async {
        let hooks = HookList()
        let ran = Mutex<[String]>([])
        await hooks.run()  // none yet: nothing to do
        hooks.add {
            await Task.yield()
            ran.withLock { $0.append("first") }
        }
        hooks.add { ran.withLock { $0.append("second") } }
        await hooks.run()
        #expect(ran.withLock { $0 } == ["first", "second"])
        await hooks.run()
        #expect(ran.withLock { $0 } == ["first", "second", "first", "second"])
    }
}
