import CourierTestServer
import Foundation
import Testing

@Suite("ProcessLauncher")
struct ProcessLauncherTests {
    @Test func aStartAboveTheDescriptorLimitIsRefusedWithTheCause() {
        #expect(ProcessLauncher.refusal(openDescriptors: 900) == nil)
        #expect(ProcessLauncher.refusal(openDescriptors: ProcessLauncher.descriptorLimit) == nil)
        #expect(ProcessLauncher.refusal(openDescriptors: nil) == nil)
        let refusal = ProcessLauncher.refusal(openDescriptors: 1_600)
        #expect(refusal?.open == 1_600)
        #expect(refusal?.description.contains("PR #5472") == true)
    }

    @Test func theOpenDescriptorCountSeesDescriptorsThisTestHolds() throws {
        let handles = try (0..<40).map { _ in try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/null")) }
        defer { for handle in handles { try? handle.close() } }
        // stdin, stdout, stderr and our 40 at least (other suites only add to it).
        #expect(try #require(ProcessLauncher.openDescriptorCount()) >= 43)
    }
}
