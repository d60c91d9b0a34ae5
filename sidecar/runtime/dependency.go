package runtime

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

var (
	apiKeyRE  = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	packageRE = regexp.MustCompile(`^(@[a-z0-9][a-z0-9._~-]*/)?[A-Za-z0-9][A-Za-z0-9._~-]*$`)
	// goModuleRE: module paths for the Go ecosystem (host/path), which npm names cannot be.
	goModuleRE = regexp.MustCompile(`^[a-z0-9.-]+\.[a-z]{2,}(/[A-Za-z0-9._~-]+)+$`)
)

// ValidateDependencyValue checks a provided value for its dependency type, as
// dependency-request-handling.md's validators do. An empty value is the caller's concern
// (allowed only for optional dependencies).
func ValidateDependencyValue(typ, value string) error {
	if strings.TrimSpace(value) == "" {
		return errors.New("value cannot be empty")
	}
	switch typ {
	case "api_key":
		if !apiKeyRE.MatchString(value) {
			return errors.New("invalid API key format (letters, digits, _ and - only)")
		}
		if len(value) < 8 {
			return errors.New("API key too short (at least 8 characters)")
		}
	case "env_variable":
		if len(value) > 10000 {
			return errors.New("environment variable too long (at most 10000 characters)")
		}
		if strings.ContainsRune(value, 0) {
			return errors.New("environment variable contains a NUL byte")
		}
	case "service":
		u, err := url.Parse(value)
		if err != nil || u.Host == "" {
			return errors.New("invalid URL format")
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return errors.New("only HTTP(S) protocols allowed")
		}
	case "file":
		if strings.Contains(value, "..") {
			return errors.New("path traversal detected")
		}
		if len(value) > 500 {
			return errors.New("file path too long (at most 500 characters)")
		}
	case "permission":
		switch strings.ToLower(value) {
		case "true", "false", "yes", "no":
		default:
			return errors.New("permission must be true/false or yes/no")
		}
	case "package":
		// Not only npm (spec/README.md): npm names and scopes, PyPI/crates names, Go modules.
		if len(value) > 214 || !(packageRE.MatchString(value) || goModuleRE.MatchString(value)) {
			return errors.New("invalid package name format")
		}
	default:
		return fmt.Errorf("unknown dependency type: %s", typ)
	}
	return nil
}
