package approvalpage

import "testing"

func TestPlainly(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]string{
		"String length must be greater than or equal to 5": "must be at least 5 characters",
		"String length must be less than or equal to 80":   "must be at most 80 characters",
		"Must be greater than or equal to 1":               "must be 1 or more",
		"Must be less than or equal to 2.5":                "must be 2.5 or less",
		"Invalid type. Expected: integer, given: string":   "must be a whole number",
		"Invalid type. Expected: boolean, given: string":   "must be yes or no",
		"Does not match pattern '^[A-Z]{2}$'":              "is not in the expected form",
		"Must be one of the following: \"EUR\", \"USD\"":   "must be one of \"EUR\", \"USD\"",
		"reason is required":                               "reason is needed",
		"Invalid type. Expected: tuple, given: string":     "Invalid type. Expected: tuple, given: string",
		"something the validator says that we do not know": "something the validator says that we do not know",
	} {
		if got := plainly(msg); got != want {
			t.Errorf("plainly(%q) = %q, want %q", msg, got, want)
		}
	}
}
