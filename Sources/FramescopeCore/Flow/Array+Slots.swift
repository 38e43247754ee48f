extension Array {
    /// Stores `element` in a freed slot if there is one, else at the end; returns its index.
    /// (Connection state lives in such slot arrays, mutated in place, found by index.)
    mutating func place(_ element: Element, reusing freeSlots: inout [Int]) -> Int {
        if let free = freeSlots.popLast() {
            self[free] = element
            return free
        }
        append(element)
        return count - 1
    }
}
