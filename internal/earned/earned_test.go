package earned

import (
	"math"
	"testing"
)

// Reference values of the Wilson lower bound at 95% (computed by hand from
// the closed form, and agreeing with published tables: 0 of 0 is 0, 10 of
// 10 is 0.7225, 1 of 2 is 0.0945).
func TestWilsonLower(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		correct, n int
		want       float64
	}{
		{0, 0, 0}, {0, 10, 0}, {10, 10, 0.7225}, {1, 2, 0.0945}, {35, 35, 0.9011}, {34, 34, 0.8985},
		{90, 100, 0.8256}, {45, 50, 0.7864}, {500, 500, 0.9924},
	} {
		if got := WilsonLower(tc.correct, tc.n); math.Abs(got-tc.want) > 5e-5 {
			t.Errorf("WilsonLower(%d, %d) = %.5f, want %.4f", tc.correct, tc.n, got, tc.want)
		}
	}
}

// At the default target a rule never rejected earns it at its 35th
// accepted review (the bound of 34 of 34 is 0.8985, of 35 of 35 0.9011);
// one rejection costs many more; an earned rule needs none; a target of
// 0.99 needs hundreds.
func TestStandings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r      Record
		target float64
		state  State
		needed int
	}{
		{Record{"value_conflict", 0, 0}, 0.9, Probation, 35},
		{Record{"value_conflict", 34, 34}, 0.9, Probation, 1},
		{Record{"value_conflict", 35, 35}, 0.9, Earned, 0},
		{Record{"antonym", 36, 35}, 0.9, Probation, 17}, // 52 of 53: 0.9006
		{Record{"llm:qwen", 100, 99}, 0.9, Earned, 0},
		{Record{"llm:qwen", 100, 80}, 0.9, Probation, ReviewsNeeded(80, 100, 0.9)},
		{Record{"x", 0, 0}, 0.99, Probation, 381},
	} {
		s := Judge(tc.r, tc.target)
		if s.State != tc.state || s.ReviewsNeeded != tc.needed {
			t.Errorf("%+v at %.2f: %s, %d reviews needed (bound %.4f); want %s, %d", tc.r, tc.target, s.State, s.ReviewsNeeded, s.Bound, tc.state, tc.needed)
		}
		if s.State == Probation {
			k := s.ReviewsNeeded
			if WilsonLower(tc.r.Correct+k, tc.r.Decided+k) < tc.target || WilsonLower(tc.r.Correct+k-1, tc.r.Decided+k-1) >= tc.target {
				t.Errorf("%+v: %d is not the fewest reviews that earn it", tc.r, k)
			}
		}
	}
	// An undo after earning: the rule is back on probation.
	if s := Judge(Record{"value_conflict", 36, 35}, 0.9); s.State != Probation {
		t.Errorf("one undo after 35 right: %s (bound %.4f)", s.State, s.Bound)
	}
	if got := ReviewsNeeded(0, 1000000, 0.999); got != -1 {
		t.Errorf("an unreachable target: %d", got)
	}
}
