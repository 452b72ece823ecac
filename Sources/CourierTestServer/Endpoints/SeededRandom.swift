/// The byte generator behind `/bytes/{n}?seed=` and `/stream-bytes/{n}?seed=`: CPython's
/// Mersenne Twister seeded from an integer, drawing `random.randint(0, 255)` per byte, so that
/// a seeded request returns the same bytes as httpbin does (CPython 3.11's algorithm).
struct SeededRandom {
    private var state = [UInt32](repeating: 0, count: 624)
    private var index = 624

    /// Seeds like CPython's `random.seed(seed)` for an integer seed.
    init(seed: UInt64) {
        var key: [UInt32] = []
        var remaining = seed
        repeat {
            key.append(UInt32(truncatingIfNeeded: remaining))
            remaining >>= 32
        } while remaining != 0
        self.initialize(by: key)
    }

    /// `random.randint(0, 255)`: nine random bits, drawn again while they exceed 255.
    mutating func nextByte() -> UInt8 {
        while true {
            let value = self.nextUInt32() >> 23
            if value < 256 { return UInt8(value) }
        }
    }

    /// `count` bytes drawn with `nextByte()`.
    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in self.nextByte() }
    }

    private mutating func initialize(seed: UInt32) {
        self.state[0] = seed
        for i in 1..<624 {
            self.state[i] = 1_812_433_253 &* (self.state[i - 1] ^ (self.state[i - 1] >> 30)) &+ UInt32(i)
        }
        self.index = 624
    }

    /// MT19937's `init_by_array`, as CPython's `random_seed` calls it.
    private mutating func initialize(by key: [UInt32]) {
        self.initialize(seed: 19_650_218)
        var i = 1
        var j = 0
        for _ in 0..<max(624, key.count) {
            self.state[i] = (self.state[i] ^ ((self.state[i - 1] ^ (self.state[i - 1] >> 30)) &* 1_664_525)) &+ key[j] &+ UInt32(j)
            i += 1
            j += 1
            if i >= 624 {
                self.state[0] = self.state[623]
                i = 1
            }
            if j >= key.count { j = 0 }
        }
        for _ in 0..<623 {
            self.state[i] = (self.state[i] ^ ((self.state[i - 1] ^ (self.state[i - 1] >> 30)) &* 1_566_083_941)) &- UInt32(i)
            i += 1
            if i >= 624 {
                self.state[0] = self.state[623]
                i = 1
            }
        }
        self.state[0] = 0x8000_0000
    }

    private mutating func nextUInt32() -> UInt32 {
        if self.index >= 624 { self.twist() }
        var y = self.state[self.index]
        self.index += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C_5680
        y ^= (y << 15) & 0xEFC6_0000
        y ^= y >> 18
        return y
    }

    private mutating func twist() {
        for i in 0..<624 {
            let y = (self.state[i] & 0x8000_0000) | (self.state[(i + 1) % 624] & 0x7FFF_FFFF)
            var next = self.state[(i + 397) % 624] ^ (y >> 1)
            if y & 1 != 0 { next ^= 0x9908_B0DF }
            self.state[i] = next
        }
        self.index = 0
    }
}
