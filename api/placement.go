package api

// Affinity is a soft placement preference (the affinity block): nodes, or
// device groups, whose LTarget compares to RTarget by Operand score higher
// (Weight > 0) or lower (Weight < 0). Weight is in [-100, 100] and not 0;
// nil means 50.
type Affinity struct {
	LTarget string
	RTarget string
	Operand string
	Weight  *int `json:",omitempty"`
}

// Spread distributes a group's allocations over the values of a node
// attribute (the spread block): evenly without targets, else by the
// targets' percentages. Weight is in [1, 100]; nil means 50.
type Spread struct {
	Attribute    string
	Weight       *int            `json:",omitempty"`
	SpreadTarget []*SpreadTarget `json:",omitempty"`
}

// SpreadTarget is the percentage of a group's allocations that should run
// on nodes whose spread attribute is Value.
type SpreadTarget struct {
	Value   string
	Percent int
}
