package agent

import (
	"fmt"

	"github.com/drover-io/drover/inputlimit"
)

// readConfigFile reads an agent configuration file, refusing one larger
// than the limits of package inputlimit without reading it whole.
func readConfigFile(path string) ([]byte, error) {
	src, err := inputlimit.ReadFile(path, inputlimit.MaxJSONBytes)
	if err != nil {
		if inputlimit.IsLimit(err) {
			return nil, fmt.Errorf("invalid agent configuration: %w", err)
		}
		return nil, fmt.Errorf("read config: %w", err)
	}
	return src, nil
}

// checkConfigLimits refuses a configuration file too large or nested too
// deep to parse safely, before any parser sees it. It checks the file as
// the syntax the parser will read it as (detectFormat).
func checkConfigLimits(path string, src []byte) error {
	format := inputlimit.HCL
	if detectFormat(src) == formatJSON {
		format = inputlimit.JSON
	}
	if err := inputlimit.Check(path, src, format); err != nil {
		return fmt.Errorf("invalid agent configuration: %w", err)
	}
	return nil
}
