package replay

import (
	"fmt"

	"github.com/gorr-debugger/gorr/internal/trace"
)

// queue reads events with look-ahead.
type queue struct {
	r     *trace.Reader
	ahead []*trace.Event
	err   error
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

func (q *queue) next() (*trace.Event, error) {
	if len(q.ahead) > 0 {
		ev := q.ahead[0]
		// (The backing array would keep every event it held alive.)
		q.ahead[0] = nil
		q.ahead = q.ahead[1:]
		return ev, nil
	}
	if q.err != nil {
		return nil, q.err
	}
	return q.r.Next()
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
			ev, err := q.r.Next()
			if err != nil {
				q.err = err
				return nil, nil
			}
			q.ahead = append(q.ahead, ev)
		}
		if ev := q.ahead[i]; ev.Tid == tid && match(ev) {
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
		ev, err := q.r.Next()
		if err != nil {
			q.err = err
			return nil, nil
		}
		q.ahead = append(q.ahead, ev)
	}
	return q.ahead[i], nil
}
