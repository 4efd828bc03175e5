package trace

import "sync"

// Prefetching: replay spends much of its time waiting for the tracee,
// and a stretch of buffered calls is thousands of events it needs at
// once. A prefetching Reader decodes the events on a goroutine of its
// own, in batches, ahead of what Next has returned, so that decoding
// runs on the other CPU while the replayer waits.

const (
	prefetchBatch = 256 // events a batch holds
	prefetchDepth = 4   // batches decoded ahead
)

// batch is events decoded in a row: start is the Mark before the first
// one; err, if set, follows the last one.
type batch struct {
	start Mark
	evs   []*Event
	err   error
}

// prefetcher is the consumer side of a prefetching Reader.
type prefetcher struct {
	batches chan batch
	stop    chan struct{}
	wg      sync.WaitGroup
	cur     batch // the batch Next takes events from
	pos     int   // events of cur returned
	err     error // sticky: the error that ended the batches
	started bool  // cur came from the channel
}

// Prefetch makes r decode events ahead on a goroutine of its own. Next,
// Mark and Seek behave as before (a Mark taken in a prefetching Reader
// restores on any Reader of the trace); Close stops the goroutine. A
// Reader that prefetches already, or has failed, is left as it is.
func (r *Reader) Prefetch() {
	if r.pf != nil || r.err != nil {
		return
	}
	pf := &prefetcher{batches: make(chan batch, prefetchDepth), stop: make(chan struct{})}
	pf.cur.start = r.streamMark()
	r.pf = pf
	pf.wg.Add(1)
	go func() {
		defer pf.wg.Done()
		defer close(pf.batches)
		for {
			b := batch{start: r.streamMark(), evs: make([]*Event, 0, prefetchBatch)}
			for len(b.evs) < prefetchBatch {
				ev, err := r.read()
				if err != nil {
					b.err = err
					break
				}
				b.evs = append(b.evs, ev)
			}
			select {
			case pf.batches <- b:
			case <-pf.stop:
				return
			}
			if b.err != nil {
				return
			}
		}
	}()
}

// next returns the next event of the batches.
func (pf *prefetcher) next() (*Event, error) {
	for pf.pos == len(pf.cur.evs) {
		if pf.err != nil {
			return nil, pf.err
		}
		if pf.started && pf.cur.err != nil {
			pf.err = pf.cur.err
			return nil, pf.err
		}
		b, ok := <-pf.batches
		if !ok {
			// (Only after a stop, which Seek and Close make.)
			pf.err = errReaderClosed
			return nil, pf.err
		}
		pf.cur, pf.pos, pf.started = b, 0, true
	}
	ev := pf.cur.evs[pf.pos]
	pf.cur.evs[pf.pos] = nil
	pf.pos++
	return ev, nil
}

// failed tells whether Next has returned an error.
func (pf *prefetcher) failed() bool { return pf.err != nil }

// stopPrefetch stops r's goroutine, if any; r then reads from the
// streams again, at the position of the batches decoded ahead, which
// Seek replaces.
func (r *Reader) stopPrefetch() {
	pf := r.pf
	if pf == nil {
		return
	}
	close(pf.stop)
	for range pf.batches {
	}
	pf.wg.Wait()
	r.pf = nil
}
