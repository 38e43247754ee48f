import FramescopeCore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// An output file appears under its name only when complete, and replaces what had the name as
/// `rename` would: a regular file by exchange (the old one removed after), a symbolic link
/// itself (its target untouched), a hard link's other names keeping the old contents; nothing
/// of the temporary names stays behind.
@Suite struct OutputFileTests {
    let folder: String = {
        let path = NSTemporaryDirectory() + "framescope-output-\(getpid())-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    func write(_ text: String, to path: String) throws {
        let file = try OutputFile(path)
        #expect(Array(text.utf8).withUnsafeBytes { file.write($0) })
        try file.commit()
    }

    func contents(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    /// Only the names the test made: no temporary file is left in the folder.
    func expectOnly(_ names: Set<String>) throws {
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: folder)) == names)
    }

    @Test func aNewFileAppearsOnlyWhenCommitted() throws {
        let path = folder + "/report.json"
        let file = try OutputFile(path)
        #expect(Array("new".utf8).withUnsafeBytes { file.write($0) })
        #expect(contents(path) == nil)
        try file.commit()
        #expect(contents(path) == "new")
        try expectOnly(["report.json"])
    }

    @Test func aRegularFileIsReplacedAndTheOldOneRemoved() throws {
        let path = folder + "/report.json"
        try write("old, and longer than the new one", to: path)
        let old = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int
        try write("new", to: path)
        #expect(contents(path) == "new")
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int != old)
        try expectOnly(["report.json"])
    }

    @Test func aDiscardedFileLeavesThePreviousOne() throws {
        let path = folder + "/report.json"
        try write("old", to: path)
        let file = try OutputFile(path)
        #expect(Array("half of a new one".utf8).withUnsafeBytes { file.write($0) })
        file.discard()
        #expect(contents(path) == "old")
        try expectOnly(["report.json"])
    }

    @Test func aSymbolicLinkIsReplacedAndItsTargetKept() throws {
        let target = folder + "/target.json", link = folder + "/link.json"
        try write("target", to: target)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        try write("new", to: link)
        #expect(contents(target) == "target")
        #expect(contents(link) == "new")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == nil)
        try expectOnly(["target.json", "link.json"])
    }

    @Test func anotherHardLinkKeepsTheOldContents() throws {
        let path = folder + "/report.json", other = folder + "/kept.json"
        try write("old", to: path)
        #expect(link(path, other) == 0)
        try write("new", to: path)
        #expect(contents(path) == "new")
        #expect(contents(other) == "old")
        try expectOnly(["report.json", "kept.json"])
    }

    @Test func aDirectoryIsNoDestination() throws {
        let path = folder + "/reports"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        #expect(throws: OutputFileError.self) { try OutputFile(path) }
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue)
        try expectOnly(["reports"])
    }
}
