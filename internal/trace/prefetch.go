package trace

import "sync"

// Prefetching: replay spends much of its time waiting for the tracee,
// and a stretch of buffered calls is thousands of events it needs at
// once. A prefetching Reader decodes the events on a goroutine of its
// own, in batches, ahead of what Next has returned, so that decoding
// runs on the other CPU while the replayer waits.

const (
	prefetchBatch = 256 // events a batch holds (a run counts its events: the batch ends after it)
	prefetchDepth = 4   // batches decoded ahead
)

// batch is events decoded in a row: start is the Mark before the first
// one; err, if set, follows the last one. A run frame is passed on whole
// (item.run) and its events are built as Next returns them, so that a
// replay that has the stub replay a stretch of calls without a stop can
// take their records without events (RunAhead, SkipCalls).
type batch struct {
	start Mark
	items []item
	err   error
}

// item is an event, or a run of calls none of whose events was returned.
type item struct {
	ev  *Event
	run *callRun
}

// prefetcher is the consumer side of a prefetching Reader.
type prefetcher struct {
	batches chan batch
	stop    chan struct{}
	wg      sync.WaitGroup
	cur     batch // the batch Next takes events from
	pos     int   // items of cur taken
	evs     int   // events of cur returned or skipped (Mark)
	run     *callRun
	slab    evSlab // where the events of run are built
	err     error  // sticky: the error that ended the batches
	started bool   // cur came from the channel
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
			b := batch{start: r.streamMark(), items: make([]item, 0, prefetchBatch)}
			for n := 0; n < prefetchBatch; {
				ev, run, err := r.readItem()
				if err != nil {
					b.err = err
					break
				}
				b.items = append(b.items, item{ev, run})
				if run != nil {
					n += 2 * run.calls
				} else {
					n++
				}
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
	for {
		if run := pf.run; run != nil {
			ev := run.next(&pf.slab)
			if run.done() {
				pf.run = nil
			}
			pf.evs++
			return ev, nil
		}
		if err := pf.fill(); err != nil {
			return nil, err
		}
		it := pf.cur.items[pf.pos]
		pf.cur.items[pf.pos] = item{}
		pf.pos++
		if it.run != nil {
			pf.run = it.run
			continue
		}
		pf.evs++
		return it.ev, nil
	}
}

// fill makes cur hold an item not taken yet, waiting for the next batch
// if needed.
func (pf *prefetcher) fill() error {
	for pf.pos == len(pf.cur.items) {
		if pf.err != nil {
			return pf.err
		}
		if pf.started && pf.cur.err != nil {
			pf.err = pf.cur.err
			return pf.err
		}
		b, ok := <-pf.batches
		if !ok {
			// (Only after a stop, which Seek and Close make.)
			pf.err = errReaderClosed
			return pf.err
		}
		pf.cur, pf.pos, pf.evs, pf.started = b, 0, 0, true
	}
	return nil
}

// ahead returns the run whose calls the next events are, if any (an
// error is left for next to return).
func (pf *prefetcher) ahead() *callRun {
	if pf.run == nil && pf.fill() == nil {
		if it := pf.cur.items[pf.pos]; it.run != nil {
			pf.cur.items[pf.pos] = item{}
			pf.pos++
			pf.run = it.run
		}
	}
	return pf.run
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
