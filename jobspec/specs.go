package jobspec

// The shapes of the Nomad blocks that drover keeps as JSON (see raw.go).
// JSON names are those of Nomad's HTTP API.

var (
	updateSpec = &rawSpec{attrs: map[string]rawAttr{
		"max_parallel":      {"MaxParallel", rawInt},
		"health_check":      {"HealthCheck", rawString},
		"min_healthy_time":  {"MinHealthyTime", rawDuration},
		"healthy_deadline":  {"HealthyDeadline", rawDuration},
		"progress_deadline": {"ProgressDeadline", rawDuration},
		"auto_revert":       {"AutoRevert", rawBool},
		"auto_promote":      {"AutoPromote", rawBool},
		"canary":            {"Canary", rawInt},
		"stagger":           {"Stagger", rawDuration},
	}}

	rescheduleSpec = &rawSpec{attrs: map[string]rawAttr{
		"attempts":       {"Attempts", rawInt},
		"interval":       {"Interval", rawDuration},
		"delay":          {"Delay", rawDuration},
		"delay_function": {"DelayFunction", rawString},
		"max_delay":      {"MaxDelay", rawDuration},
		"unlimited":      {"Unlimited", rawBool},
	}}

	migrateSpec = &rawSpec{attrs: map[string]rawAttr{
		"max_parallel":     {"MaxParallel", rawInt},
		"health_check":     {"HealthCheck", rawString},
		"min_healthy_time": {"MinHealthyTime", rawDuration},
		"healthy_deadline": {"HealthyDeadline", rawDuration},
	}}

	affinitySpec = &rawSpec{
		attrs: map[string]rawAttr{
			"attribute": {"LTarget", rawString},
			"value":     {"RTarget", rawString},
			"operator":  {"Operand", rawString},
			"weight":    {"Weight", rawInt},
		},
		post: func(obj map[string]any) {
			if _, ok := obj["Operand"]; !ok {
				obj["Operand"] = "="
			}
		},
	}

	networkSpec = &rawSpec{
		attrs: map[string]rawAttr{
			"mode":     {"Mode", rawString},
			"device":   {"Device", rawString},
			"cidr":     {"CIDR", rawString},
			"ip":       {"IP", rawString},
			"hostname": {"Hostname", rawString},
			"mbits":    {"MBits", rawInt},
		},
		blocks: map[string]rawBlock{
			"dns": {key: "DNS", spec: &rawSpec{attrs: map[string]rawAttr{
				"servers":  {"Servers", rawStrings},
				"searches": {"Searches", rawStrings},
				"options":  {"Options", rawStrings},
			}}},
			"port": {key: "ports", many: true, label: "Label", spec: &rawSpec{attrs: map[string]rawAttr{
				"static":           {"Value", rawInt},
				"to":               {"To", rawInt},
				"host_network":     {"HostNetwork", rawString},
				"ignore_collision": {"IgnoreCollision", rawBool},
			}}},
			"cni": {key: "CNI", spec: &rawSpec{attrs: map[string]rawAttr{
				"args": {"Args", rawStringMap},
			}}},
		},
		// A port with a static number is reserved; the others are dynamic.
		post: func(obj map[string]any) {
			ports, _ := obj["ports"].([]any)
			delete(obj, "ports")
			var reserved, dynamic []any
			for _, p := range ports {
				if _, static := p.(map[string]any)["Value"]; static {
					reserved = append(reserved, p)
				} else {
					dynamic = append(dynamic, p)
				}
			}
			if reserved != nil {
				obj["ReservedPorts"] = reserved
			}
			if dynamic != nil {
				obj["DynamicPorts"] = dynamic
			}
		},
	}

	checkRestartSpec = &rawSpec{attrs: map[string]rawAttr{
		"limit":           {"Limit", rawInt},
		"grace":           {"Grace", rawDuration},
		"ignore_warnings": {"IgnoreWarnings", rawBool},
	}}

	checkSpec = &rawSpec{
		attrs: map[string]rawAttr{
			"name":                     {"Name", rawString},
			"type":                     {"Type", rawString},
			"command":                  {"Command", rawString},
			"args":                     {"Args", rawStrings},
			"path":                     {"Path", rawString},
			"protocol":                 {"Protocol", rawString},
			"port":                     {"PortLabel", rawString},
			"expose":                   {"Expose", rawBool},
			"address_mode":             {"AddressMode", rawString},
			"advertise":                {"Advertise", rawString},
			"interval":                 {"Interval", rawDuration},
			"timeout":                  {"Timeout", rawDuration},
			"initial_status":           {"InitialStatus", rawString},
			"notes":                    {"Notes", rawString},
			"tls_server_name":          {"TLSServerName", rawString},
			"tls_skip_verify":          {"TLSSkipVerify", rawBool},
			"method":                   {"Method", rawString},
			"grpc_service":             {"GRPCService", rawString},
			"grpc_use_tls":             {"GRPCUseTLS", rawBool},
			"task":                     {"TaskName", rawString},
			"success_before_passing":   {"SuccessBeforePassing", rawInt},
			"failures_before_critical": {"FailuresBeforeCritical", rawInt},
			"failures_before_warning":  {"FailuresBeforeWarning", rawInt},
			"body":                     {"Body", rawString},
			"on_update":                {"OnUpdate", rawString},
		},
		blocks: map[string]rawBlock{
			"header":        {key: "Header", freeform: true},
			"check_restart": {key: "CheckRestart", spec: checkRestartSpec},
		},
	}

	identitySpec = &rawSpec{attrs: map[string]rawAttr{
		"name":          {"Name", rawString},
		"aud":           {"Audience", rawStrings},
		"change_mode":   {"ChangeMode", rawString},
		"change_signal": {"ChangeSignal", rawString},
		"env":           {"Env", rawBool},
		"file":          {"File", rawBool},
		"filepath":      {"Filepath", rawString},
		"service_name":  {"ServiceName", rawString},
		"ttl":           {"TTL", rawDuration},
		"extra_claims":  {"ExtraClaims", rawStrings},
	}}

	serviceSpec = &rawSpec{
		attrs: map[string]rawAttr{
			"name":                {"Name", rawString},
			"tags":                {"Tags", rawStrings},
			"canary_tags":         {"CanaryTags", rawStrings},
			"enable_tag_override": {"EnableTagOverride", rawBool},
			"port":                {"PortLabel", rawString},
			"address_mode":        {"AddressMode", rawString},
			"address":             {"Address", rawString},
			"task":                {"TaskName", rawString},
			"on_update":           {"OnUpdate", rawString},
			"provider":            {"Provider", rawString},
			"cluster":             {"Cluster", rawString},
			"kind":                {"Kind", rawString},
			"meta":                {"Meta", rawStringMap},
			"canary_meta":         {"CanaryMeta", rawStringMap},
			"tagged_addresses":    {"TaggedAddresses", rawStringMap},
		},
		blocks: map[string]rawBlock{
			"check":            {key: "Checks", many: true, spec: checkSpec},
			"check_restart":    {key: "CheckRestart", spec: checkRestartSpec},
			"meta":             {key: "Meta", strMap: true},
			"canary_meta":      {key: "CanaryMeta", strMap: true},
			"tagged_addresses": {key: "TaggedAddresses", strMap: true},
			"identity":         {key: "Identity", spec: identitySpec},
			"weights": {key: "Weights", spec: &rawSpec{attrs: map[string]rawAttr{
				"passing": {"Passing", rawInt},
				"warning": {"Warning", rawInt},
			}}},
			"connect": {unsupported: true},
		},
	}

	artifactSpec = &rawSpec{
		attrs: map[string]rawAttr{
			"source":      {"GetterSource", rawString},
			"destination": {"RelativeDest", rawString},
			"mode":        {"GetterMode", rawString},
			"insecure":    {"GetterInsecure", rawBool},
			"chown":       {"Chown", rawBool},
			"options":     {"GetterOptions", rawStringMap},
			"headers":     {"GetterHeaders", rawStringMap},
		},
		blocks: map[string]rawBlock{
			"options": {key: "GetterOptions", strMap: true},
			"headers": {key: "GetterHeaders", strMap: true},
		},
	}

	templateSpec = &rawSpec{
		attrs: map[string]rawAttr{
			"source":               {"SourcePath", rawString},
			"destination":          {"DestPath", rawString},
			"data":                 {"EmbeddedTmpl", rawString},
			"change_mode":          {"ChangeMode", rawString},
			"change_signal":        {"ChangeSignal", rawString},
			"once":                 {"Once", rawBool},
			"splay":                {"Splay", rawDuration},
			"perms":                {"Perms", rawString},
			"uid":                  {"Uid", rawInt},
			"gid":                  {"Gid", rawInt},
			"left_delimiter":       {"LeftDelim", rawString},
			"right_delimiter":      {"RightDelim", rawString},
			"env":                  {"Envvars", rawBool},
			"vault_grace":          {"VaultGrace", rawDuration},
			"error_on_missing_key": {"ErrMissingKey", rawBool},
		},
		blocks: map[string]rawBlock{
			"wait": {key: "Wait", spec: &rawSpec{attrs: map[string]rawAttr{
				"min": {"Min", rawDuration},
				"max": {"Max", rawDuration},
			}}},
			"change_script": {key: "ChangeScript", spec: &rawSpec{attrs: map[string]rawAttr{
				"command":             {"Command", rawString},
				"args":                {"Args", rawStrings},
				"timeout":             {"Timeout", rawDuration},
				"fail_on_error":       {"FailOnError", rawBool},
				"run_on_first_render": {"RunOnFirstRender", rawBool},
			}}},
		},
	}

	volumeSpec = &rawSpec{
		attrs: map[string]rawAttr{
			"type":            {"Type", rawString},
			"source":          {"Source", rawString},
			"read_only":       {"ReadOnly", rawBool},
			"sticky":          {"Sticky", rawBool},
			"access_mode":     {"AccessMode", rawString},
			"attachment_mode": {"AttachmentMode", rawString},
			"per_alloc":       {"PerAlloc", rawBool},
		},
		blocks: map[string]rawBlock{
			"mount_options": {key: "MountOptions", spec: &rawSpec{attrs: map[string]rawAttr{
				"fs_type":     {"FSType", rawString},
				"mount_flags": {"MountFlags", rawStrings},
			}}},
		},
	}

	volumeMountSpec = &rawSpec{attrs: map[string]rawAttr{
		"volume":           {"Volume", rawString},
		"destination":      {"Destination", rawString},
		"read_only":        {"ReadOnly", rawBool},
		"propagation_mode": {"PropagationMode", rawString},
		"selinux_label":    {"SELinuxLabel", rawString},
	}}

	deviceSpec = &rawSpec{
		attrs: map[string]rawAttr{
			"count": {"Count", rawInt},
		},
		blocks: map[string]rawBlock{
			"constraint": {key: "Constraints", many: true, constraint: true},
			"affinity":   {key: "Affinities", many: true, spec: affinitySpec},
		},
	}

	scalingSpec = &rawSpec{
		attrs: map[string]rawAttr{
			"min":     {"Min", rawInt},
			"max":     {"Max", rawInt},
			"enabled": {"Enabled", rawBool},
			"type":    {"Type", rawString},
		},
		blocks: map[string]rawBlock{
			"policy": {key: "Policy", freeform: true},
		},
	}

	consulSpec = &rawSpec{attrs: map[string]rawAttr{
		"namespace": {"Namespace", rawString},
		"cluster":   {"Cluster", rawString},
		"partition": {"Partition", rawString},
	}}

	vaultSpec = &rawSpec{attrs: map[string]rawAttr{
		"policies":               {"Policies", rawStrings},
		"role":                   {"Role", rawString},
		"namespace":              {"Namespace", rawString},
		"cluster":                {"Cluster", rawString},
		"env":                    {"Env", rawBool},
		"disable_file":           {"DisableFile", rawBool},
		"change_mode":            {"ChangeMode", rawString},
		"change_signal":          {"ChangeSignal", rawString},
		"allow_token_expiration": {"AllowTokenExpiration", rawBool},
	}}

	disconnectSpec = &rawSpec{attrs: map[string]rawAttr{
		"lost_after":           {"LostAfter", rawDuration},
		"stop_on_client_after": {"StopOnClientAfter", rawDuration},
		"replace":              {"Replace", rawBool},
		"reconcile":            {"Reconcile", rawString},
	}}

	numaSpec = &rawSpec{attrs: map[string]rawAttr{
		"affinity": {"Affinity", rawString},
		"devices":  {"Devices", rawStrings},
	}}

	uiSpec = &rawSpec{
		attrs: map[string]rawAttr{
			"description": {"Description", rawString},
		},
		blocks: map[string]rawBlock{
			"link": {key: "Links", many: true, spec: &rawSpec{attrs: map[string]rawAttr{
				"label": {"Label", rawString},
				"url":   {"URL", rawString},
			}}},
		},
	}
)
