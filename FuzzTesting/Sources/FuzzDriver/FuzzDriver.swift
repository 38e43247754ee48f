// SwiftPM links an executable with main = <Target>_main; each fuzz target defines that and
// hands control to libFuzzer's driver here.

@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafeRawPointer, Int) -> CInt
) -> CInt

/// Runs libFuzzer with `test` as the fuzz target.
public func runLibFuzzer(
    _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ test: @convention(c) (UnsafeRawPointer, Int) -> CInt
) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments, test)
}
