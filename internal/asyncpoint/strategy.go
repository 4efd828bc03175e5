package asyncpoint

// Strategies for asynchronous points, named in the trace header
// (trace.Header.PointStrategy). Record takes points with one and replay
// finds them with the same one; a back end counting retired conditional
// branches (as rr does where a PMU exists) would be another.
const (
	// StrategyStateV1 is the empty name of traces written before the
	// header field: the state identity with the word-hash checksum.
	StrategyStateV1 = ""
	// StrategyState identifies a point by the thread's whole state
	// (registers, XSAVE area, all memory outside in-flight output
	// buffers, pages hashed with CRC-32C) and finds it with a pad.
	StrategyState = "state-v2"
)

// Known tells whether replay knows how to find the points of strategy s.
func Known(s string) bool { return s == StrategyStateV1 || s == StrategyState }
