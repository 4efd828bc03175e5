package replay

import "testing"

// A stretch the task ran through at once (stopEnd: another task's event
// followed it) was checked at that stop and keeps only its event
// numbers, to pass its events over. When the task's next own event
// then comes through runTo (a traced call, or a buffered one startBufRun
// declines), endBufRun must just end it: it once indexed the empty
// record list and panicked (a CI replay of preempt_alloc_threads).
func TestEndBufRunOfStretchRunThrough(t *testing.T) {
	rp := &replayer{}
	task := &rtask{bufRun: &bufRun{first: 10, last: 13}}
	if err := rp.endBufRun(task); err != nil {
		t.Fatalf("endBufRun: %v", err)
	}
	if task.bufRun != nil {
		t.Fatalf("the stretch is still under way: %+v", task.bufRun)
	}
}
