package bench

import (
	"testing"

	"github.com/supersessiond/supersessiond/heuristics"
)

// TestPlantedPairsContradict: every pair the generator can plant (values v
// and v+1 of one one-value slot) is a contradiction the heuristics apply,
// and no many-valued filler contradicts the one after it, so that the
// bench's "supersessions / planted" compares like with like. (A colour term
// against a colour name once stopped 254 planted pairs from firing.)
func TestPlantedPairsContradict(t *testing.T) {
	t.Parallel()
	for s, slot := range oneValueSlots() {
		for v := range 120 {
			older, newer := slot(v), slot(v+1)
			d := heuristics.Decide(heuristics.Input{Content: older}, heuristics.Input{Content: newer})
			if d.Confidence < 0.7 {
				t.Errorf("slot %d: %q → %q: confidence %.2f (%s)", s, older, newer, d.Confidence, d.Reason)
			}
		}
	}
	for f := range 2000 {
		older, newer := manyValue(f), manyValue(f+1)
		if d := heuristics.Decide(heuristics.Input{Content: older}, heuristics.Input{Content: newer}); d.Confidence >= 0.7 {
			t.Errorf("fillers %q → %q: confidence %.2f (%+v)", older, newer, d.Confidence, d.Signals)
		}
	}
}
