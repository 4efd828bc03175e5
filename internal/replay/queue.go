package replay

import (
	"fmt"

	"github.com/gorr-debugger/gorr/internal/trace"
)

// queue reads events with look-ahead.
type queue struct {
	r     *trace.Reader
	ahead []queued
	err   error
	gap   uint64 // calls' events skipped (skipCalls) before the next event read
}

// queued is an event read ahead.
type queued struct {
	ev  *trace.Event
	gap uint64 // events skipped just before ev (skipCalls)
}

// newQueue reads the events of rd, which decodes them ahead on a
// goroutine of its own (trace.Reader.Prefetch): replay waits for its
// tracees much of the time, and a stretch of buffered calls needs
// thousands of events at once.
func newQueue(rd *trace.Reader) queue {
	if rd != nil {
		rd.Prefetch()
	}
	return queue{r: rd}
}

// next returns the next event and how many events before it were
// skipped (skipCalls): the replay's event count moves on by gap+1.
func (q *queue) next() (ev *trace.Event, gap uint64, err error) {
	if len(q.ahead) > 0 {
		e := q.ahead[0]
		// (The backing array would keep every event it held alive.)
		q.ahead[0] = queued{}
		q.ahead = q.ahead[1:]
		return e.ev, e.gap, nil
	}
	gap, q.gap = q.gap, 0
	if q.err != nil {
		return nil, gap, q.err
	}
	ev, err = q.r.Next()
	return ev, gap, err
}

// read appends the reader's next event to ahead.
func (q *queue) read() bool {
	ev, err := q.r.Next()
	if err != nil {
		q.err = err
		return false
	}
	q.ahead = append(q.ahead, queued{ev, q.gap})
	q.gap = 0
	return true
}

// runAhead returns the calls of a run that follow the i events read
// ahead, if i is all of them and the reader knows such a run
// (trace.Reader.RunAhead).
func (q *queue) runAhead(i int) (trace.RunAhead, bool) {
	if i != len(q.ahead) || q.err != nil {
		return trace.RunAhead{}, false
	}
	return q.r.RunAhead()
}

// skipCalls drops the next k calls of the run ahead (runAhead): their
// events are not read; the next event counts them (next).
func (q *queue) skipCalls(k int) {
	q.r.SkipCalls(k)
	q.gap += 2 * uint64(k)
}

// maxLookahead bounds how far replay reads ahead for one answer.
const maxLookahead = 1 << 20

// find returns the first upcoming event of task tid for which match is
// true, without consuming anything; nil if the trace ends first.
func (q *queue) find(tid int32, match func(*trace.Event) bool) (*trace.Event, error) {
	for i := 0; ; i++ {
		if i == len(q.ahead) {
			if q.err != nil {
				return nil, nil
			}
			if len(q.ahead) >= maxLookahead {
				return nil, fmt.Errorf("no answer for tid %d within %d events", tid, maxLookahead)
			}
			if !q.read() {
				return nil, nil
			}
		}
		if ev := q.ahead[i].ev; ev.Tid == tid && match(ev) {
			return ev, nil
		}
	}
}

// peek returns the upcoming event i places ahead (0: the next one)
// without consuming anything; nil if the trace ends first.
func (q *queue) peek(i int) (*trace.Event, error) {
	for len(q.ahead) <= i {
		if q.err != nil {
			return nil, nil
		}
		if len(q.ahead) >= maxLookahead {
			return nil, fmt.Errorf("peek %d events ahead: more than %d", i, maxLookahead)
		}
		if !q.read() {
			return nil, nil
		}
	}
	return q.ahead[i].ev, nil
}
