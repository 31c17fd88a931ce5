package templatecheck

import (
	"text/template"

	"github.com/Masterminds/sprig/v3"
)

// consulTemplateFunctions are the functions of consul-template v0.41.1's
// template language (its funcMap), less sprig's, which it adds as
// "sprig_<name>" (HermeticTxtFuncMap). TestFunctionsMatchConsulTemplate
// keeps the list in step with the module's source.
var consulTemplateFunctions = []string{
	"add", "base64Decode", "base64Encode", "base64URLDecode", "base64URLEncode", "byKey",
	"byMeta", "byPort", "byTag", "caLeaf", "caRoots", "connect", "contains", "containsAll",
	"containsAny", "containsNone", "containsNotAll", "datacenters", "divide", "env",
	"envOrDefault", "executeTemplate", "explode", "explodeMap", "exportedServices", "file",
	"hmacSHA256Hex", "in", "indent", "join", "key", "keyExists", "keyOrDefault", "loop", "ls",
	"maximum", "md5sum", "mergeMap", "mergeMapWithOverride", "minimum", "modulo", "multiply",
	"mustEnv", "node", "nodes", "nomadService", "nomadServices", "nomadVar", "nomadVarExists",
	"nomadVarList", "nomadVarListSafe", "parseBool", "parseFloat", "parseInt", "parseJSON",
	"parseUint", "parseYAML", "partitions", "peerings", "pkiCert", "plugin", "regexMatch",
	"regexReplaceAll", "replaceAll", "safeLs", "safeTree", "scratch", "secret", "secrets",
	"service", "services", "sha256Hex", "sockaddr", "spew_dump", "spew_printf", "spew_sdump",
	"spew_sprintf", "split", "splitToMap", "subtract", "timestamp", "toJSON", "toJSONPretty",
	"toLower", "toTOML", "toTitle", "toUnescapedJSON", "toUnescapedJSONPretty", "toUpper",
	"toYAML", "tree", "trim", "trimPrefix", "trimSpace", "trimSuffix", "writeToFile",
}

// functionNames returns every function name a template may call, for the
// parser (which checks names, never calls them).
func functionNames() template.FuncMap {
	stub := func() string { return "" }
	out := make(template.FuncMap, len(consulTemplateFunctions)+200)
	for _, n := range consulTemplateFunctions {
		out[n] = stub
	}
	for n := range sprig.HermeticTxtFuncMap() {
		out["sprig_"+n] = stub
	}
	return out
}
