package sweep

// OnExamine tells f each aspect a pass of j examines (tests).
func (j *Job) OnExamine(f func(agent, aspect string)) { j.examined = f }
