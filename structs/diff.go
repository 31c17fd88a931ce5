package structs

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"time"
)

// Diff types, as in Nomad's API.
const (
	DiffTypeNone    = "None"
	DiffTypeAdded   = "Added"
	DiffTypeDeleted = "Deleted"
	DiffTypeEdited  = "Edited"
)

// Update kinds counted in TaskGroupDiff.Updates and named in annotations,
// as `nomad job plan` prints them.
const (
	UpdateTypeIgnore            = "ignore"
	UpdateTypeCreate            = "create"
	UpdateTypeDestroy           = "destroy"
	UpdateTypeMigrate           = "migrate"
	UpdateTypeCanary            = "canary"
	UpdateTypeInplaceUpdate     = "in-place update"
	UpdateTypeDestructiveUpdate = "create/destroy update"
)

// Task annotations explaining what a task's change forces.
const (
	AnnotationForcesCreate            = "forces create"
	AnnotationForcesDestroy           = "forces destroy"
	AnnotationForcesInplaceUpdate     = "forces in-place update"
	AnnotationForcesDestructiveUpdate = "forces create/destroy update"
)

// JobDiff is the difference between two versions of a job (Nomad's shape).
type JobDiff struct {
	Type       string
	ID         string
	Fields     []*FieldDiff
	Objects    []*ObjectDiff
	TaskGroups []*TaskGroupDiff
}

// TaskGroupDiff is the difference of one group. Updates counts, by update
// kind, what the scheduler would do to the group's allocations.
type TaskGroupDiff struct {
	Type    string
	Name    string
	Fields  []*FieldDiff
	Objects []*ObjectDiff
	Tasks   []*TaskDiff
	Updates map[string]uint64
}

// TaskDiff is the difference of one task.
type TaskDiff struct {
	Type        string
	Name        string
	Fields      []*FieldDiff
	Objects     []*ObjectDiff
	Annotations []string
}

// FieldDiff is the difference of one primitive field.
type FieldDiff struct {
	Type        string
	Name        string
	Old, New    string
	Annotations []string
}

// ObjectDiff is the difference of a nested object.
type ObjectDiff struct {
	Type    string
	Name    string
	Fields  []*FieldDiff
	Objects []*ObjectDiff
}

// DiffJobs returns the difference from old to new; either may be nil (the
// job is added or deleted). Server-set fields (indexes, status, version)
// are not compared.
func DiffJobs(old, new *Job) *JobDiff {
	d := &JobDiff{Type: DiffTypeNone}
	switch {
	case old == nil && new == nil:
		return d
	case old == nil:
		d.Type, d.ID = DiffTypeAdded, new.ID
	case new == nil:
		d.Type, d.ID = DiffTypeDeleted, old.ID
	default:
		d.ID = new.ID
	}
	var o, n map[string]string
	if old != nil {
		o = jobFields(old)
	}
	if new != nil {
		n = jobFields(new)
	}
	d.Fields = fieldDiffs(o, n)
	d.Objects = compact(
		objectDiff("Update", flatUpdate(jobUpdate(old)), flatUpdate(jobUpdate(new))),
		constraintsDiff(jobConstraints(old), jobConstraints(new)),
		affinitiesDiff(jobAffinities(old), jobAffinities(new)), // placement.go
		spreadsDiff(jobSpreads(old), jobSpreads(new)),
		periodicDiff(old, new), // periodic.go
		parameterizedDiff(old, new),
	)
	groups := map[string]bool{}
	var names []string
	for _, j := range []*Job{old, new} {
		if j == nil {
			continue
		}
		for _, tg := range j.TaskGroups {
			if !groups[tg.Name] {
				groups[tg.Name] = true
				names = append(names, tg.Name)
			}
		}
	}
	for _, name := range names {
		var og, ng *TaskGroup
		if old != nil {
			og = old.LookupTaskGroup(name)
		}
		if new != nil {
			ng = new.LookupTaskGroup(name)
		}
		d.TaskGroups = append(d.TaskGroups, diffGroups(name, og, ng))
	}
	if d.Type == DiffTypeNone && (len(d.Fields) > 0 || len(d.Objects) > 0) {
		d.Type = DiffTypeEdited
	}
	for _, g := range d.TaskGroups {
		if d.Type == DiffTypeNone && g.Type != DiffTypeNone {
			d.Type = DiffTypeEdited
		}
	}
	return d
}

func jobUpdate(j *Job) *UpdateStrategy {
	if j == nil {
		return nil
	}
	return j.Update
}

func jobConstraints(j *Job) []*Constraint {
	if j == nil {
		return nil
	}
	return j.Constraints
}

func jobAffinities(j *Job) []*Affinity {
	if j == nil {
		return nil
	}
	return j.Affinities
}

func jobSpreads(j *Job) []*Spread {
	if j == nil {
		return nil
	}
	return j.Spreads
}

func jobFields(j *Job) map[string]string {
	m := map[string]string{
		"Name":        j.Name,
		"Type":        j.Type,
		"Priority":    strconv.Itoa(j.Priority),
		"AllAtOnce":   strconv.FormatBool(j.AllAtOnce),
		"Region":      j.Region,
		"Namespace":   j.Namespace,
		"Stop":        strconv.FormatBool(j.Stop),
		"Datacenters": fmt.Sprint(j.Datacenters),
		"NodePool":    NodePoolName(j.NodePool),
	}
	for k, v := range j.Meta {
		m["Meta["+k+"]"] = v
	}
	return m
}

func diffGroups(name string, old, new *TaskGroup) *TaskGroupDiff {
	d := &TaskGroupDiff{Type: diffType(old != nil, new != nil), Name: name}
	fields := func(tg *TaskGroup) map[string]string {
		if tg == nil {
			return nil
		}
		m := map[string]string{"Count": strconv.Itoa(tg.Count)}
		for k, v := range tg.Meta {
			m["Meta["+k+"]"] = v
		}
		return m
	}
	get := func(tg *TaskGroup) (*RestartPolicy, *EphemeralDisk, *UpdateStrategy, []*Constraint) {
		if tg == nil {
			return nil, nil, nil, nil
		}
		return tg.RestartPolicy, tg.EphemeralDisk, tg.Update, tg.Constraints
	}
	// A group has at most one network block (the agent refuses more).
	network := func(tg *TaskGroup) *NetworkResource {
		if tg == nil || len(tg.Networks) == 0 {
			return nil
		}
		return tg.Networks[0]
	}
	placement := func(tg *TaskGroup) ([]*Affinity, []*Spread) {
		if tg == nil {
			return nil, nil
		}
		return tg.Affinities, tg.Spreads
	}
	orp, oed, oup, oc := get(old)
	nrp, ned, nup, nc := get(new)
	oa, os := placement(old)
	na, ns := placement(new)
	d.Fields = fieldDiffs(fields(old), fields(new))
	d.Objects = compact(
		objectDiff("RestartPolicy", flatStruct(orp), flatStruct(nrp)),
		objectDiff("EphemeralDisk", flatStruct(oed), flatStruct(ned)),
		objectDiff("Update", flatUpdate(oup), flatUpdate(nup)),
		objectDiff("Network", flatNetwork(network(old)), flatNetwork(network(new))), // network.go
		constraintsDiff(oc, nc),
		affinitiesDiff(oa, na),
		spreadsDiff(os, ns),
	)
	d.Objects = append(d.Objects, volumesDiff(groupVolumes(old), groupVolumes(new))...) // volumes_diff.go
	tasks := map[string]bool{}
	var names []string
	for _, tg := range []*TaskGroup{old, new} {
		if tg == nil {
			continue
		}
		for _, t := range tg.Tasks {
			if !tasks[t.Name] {
				tasks[t.Name] = true
				names = append(names, t.Name)
			}
		}
	}
	for _, tn := range names {
		var ot, nt *Task
		if old != nil {
			ot = old.LookupTask(tn)
		}
		if new != nil {
			nt = new.LookupTask(tn)
		}
		d.Tasks = append(d.Tasks, diffTasks(tn, ot, nt))
	}
	if d.Type == DiffTypeNone {
		if len(d.Fields) > 0 || len(d.Objects) > 0 {
			d.Type = DiffTypeEdited
		}
		for _, t := range d.Tasks {
			if t.Type != DiffTypeNone {
				d.Type = DiffTypeEdited
			}
		}
	}
	return d
}

func diffTasks(name string, old, new *Task) *TaskDiff {
	d := &TaskDiff{Type: diffType(old != nil, new != nil), Name: name}
	fields := func(t *Task) map[string]string {
		if t == nil {
			return nil
		}
		m := map[string]string{
			"Driver":      t.Driver,
			"User":        t.User,
			"KillTimeout": strconv.FormatInt(int64(t.KillTimeout), 10),
			"KillSignal":  t.KillSignal,
			"Leader":      strconv.FormatBool(t.Leader),
		}
		for k, v := range t.Env {
			m["Env["+k+"]"] = v
		}
		for k, v := range t.Meta {
			m["Meta["+k+"]"] = v
		}
		return m
	}
	get := func(t *Task) (map[string]any, *Resources, *RestartPolicy, *LogConfig, *TaskLifecycle, []*Constraint) {
		if t == nil {
			return nil, nil, nil, nil, nil, nil
		}
		return t.Config, t.Resources, t.RestartPolicy, t.LogConfig, t.Lifecycle, t.Constraints
	}
	ocfg, ores, orp, olog, olc, oc := get(old)
	ncfg, nres, nrp, nlog, nlc, nc := get(new)
	affinities := func(t *Task) []*Affinity {
		if t == nil {
			return nil
		}
		return t.Affinities
	}
	d.Fields = fieldDiffs(fields(old), fields(new))
	d.Objects = compact(
		objectDiff("Config", flatConfig(ocfg, old != nil), flatConfig(ncfg, new != nil)),
		objectDiff("Resources", flatResources(ores), flatResources(nres)),
		objectDiff("RestartPolicy", flatStruct(orp), flatStruct(nrp)),
		objectDiff("LogConfig", flatStruct(olog), flatStruct(nlog)),
		objectDiff("Lifecycle", flatStruct(olc), flatStruct(nlc)),
		constraintsDiff(oc, nc),
		affinitiesDiff(affinities(old), affinities(new)),
	)
	d.Objects = append(d.Objects, artifactsDiff(old, new)...)                                        // artifact.go
	d.Objects = append(d.Objects, volumeMountsDiff(taskVolumeMounts(old), taskVolumeMounts(new))...) // volumes_diff.go
	d.Objects = append(d.Objects, templatesDiff(old, new)...)                                        // template.go
	if d.Type == DiffTypeNone && (len(d.Fields) > 0 || len(d.Objects) > 0) {
		d.Type = DiffTypeEdited
	}
	switch d.Type {
	case DiffTypeAdded:
		d.Annotations = []string{AnnotationForcesCreate}
	case DiffTypeDeleted:
		d.Annotations = []string{AnnotationForcesDestroy}
	case DiffTypeEdited:
		// Every task change is destructive (meta reaches the task's
		// environment); see the scheduler's tasksUpdated.
		d.Annotations = []string{AnnotationForcesDestructiveUpdate}
	}
	return d
}

func diffType(hasOld, hasNew bool) string {
	switch {
	case hasOld && !hasNew:
		return DiffTypeDeleted
	case !hasOld && hasNew:
		return DiffTypeAdded
	}
	return DiffTypeNone
}

// fieldDiffs compares two flattened objects; equal fields are left out.
func fieldDiffs(old, new map[string]string) []*FieldDiff {
	keys := map[string]bool{}
	for k := range old {
		keys[k] = true
	}
	for k := range new {
		keys[k] = true
	}
	names := slices.Sorted(maps.Keys(keys))
	var out []*FieldDiff
	for _, k := range names {
		ov, inOld := old[k]
		nv, inNew := new[k]
		switch {
		case inOld && inNew && ov == nv:
			continue
		case inOld && inNew:
			out = append(out, &FieldDiff{Type: DiffTypeEdited, Name: k, Old: ov, New: nv})
		case inOld:
			out = append(out, &FieldDiff{Type: DiffTypeDeleted, Name: k, Old: ov})
		default:
			out = append(out, &FieldDiff{Type: DiffTypeAdded, Name: k, New: nv})
		}
	}
	return out
}

// objectDiff compares two flattened nested objects (nil: absent); it is
// nil when they are equal.
func objectDiff(name string, old, new map[string]string) *ObjectDiff {
	fields := fieldDiffs(old, new)
	if len(fields) == 0 && (old == nil) == (new == nil) {
		return nil
	}
	return &ObjectDiff{Type: objectType(old != nil, new != nil), Name: name, Fields: fields}
}

func objectType(hasOld, hasNew bool) string {
	if t := diffType(hasOld, hasNew); t != DiffTypeNone {
		return t
	}
	return DiffTypeEdited
}

// constraintsDiff lists added and removed constraints as objects.
func constraintsDiff(old, new []*Constraint) *ObjectDiff {
	in := func(cs []*Constraint, c *Constraint) bool {
		for _, x := range cs {
			if *x == *c {
				return true
			}
		}
		return false
	}
	var objs []*ObjectDiff
	for _, c := range old {
		if !in(new, c) {
			objs = append(objs, &ObjectDiff{Type: DiffTypeDeleted, Name: "Constraint", Fields: fieldDiffs(flatStruct(c), nil)})
		}
	}
	for _, c := range new {
		if !in(old, c) {
			objs = append(objs, &ObjectDiff{Type: DiffTypeAdded, Name: "Constraint", Fields: fieldDiffs(nil, flatStruct(c))})
		}
	}
	if len(objs) == 0 {
		return nil
	}
	return &ObjectDiff{Type: DiffTypeEdited, Name: "Constraints", Objects: objs}
}

func compact(objs ...*ObjectDiff) []*ObjectDiff {
	var out []*ObjectDiff
	for _, o := range objs {
		if o != nil {
			out = append(out, o)
		}
	}
	return out
}

func flatUpdate(u *UpdateStrategy) map[string]string { return flatStruct(u) }

func flatResources(r *Resources) map[string]string {
	if r == nil {
		return nil
	}
	c := *r
	c.Devices = nil
	m := flatStruct(&c)
	for i, d := range r.Devices {
		b, _ := json.Marshal(d)
		m["Devices["+strconv.Itoa(i)+"]"] = string(b)
	}
	return m
}

// flatConfig flattens a driver config; nested values are rendered as JSON.
func flatConfig(cfg map[string]any, present bool) map[string]string {
	if !present {
		return nil
	}
	m := map[string]string{}
	for k, v := range cfg {
		switch x := v.(type) {
		case string:
			m[k] = x
		case nil:
			m[k] = ""
		default:
			b, err := json.Marshal(x)
			if err != nil {
				m[k] = fmt.Sprint(x)
			} else {
				m[k] = string(b)
			}
		}
	}
	return m
}

// flatStruct renders the exported primitive fields of a pointer to struct
// as strings; nil gives nil.
func flatStruct(p any) map[string]string {
	v := reflect.ValueOf(p)
	if !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return nil
	}
	v = reflect.Indirect(v)
	t := v.Type()
	m := map[string]string{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		fv := v.Field(i)
		if f.Type == reflect.TypeOf(time.Duration(0)) {
			m[f.Name] = strconv.FormatInt(fv.Int(), 10)
			continue
		}
		switch fv.Kind() {
		case reflect.String:
			m[f.Name] = fv.String()
		case reflect.Bool:
			m[f.Name] = strconv.FormatBool(fv.Bool())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			m[f.Name] = strconv.FormatInt(fv.Int(), 10)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			m[f.Name] = strconv.FormatUint(fv.Uint(), 10)
		case reflect.Float32, reflect.Float64:
			m[f.Name] = strconv.FormatFloat(fv.Float(), 'g', -1, 64)
		}
	}
	return m
}
