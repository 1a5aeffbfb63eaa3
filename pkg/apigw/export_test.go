package apigw

import "fmt"

// Services are what the routes call, for the tests to hand Function.
type Services = services

// Function is the handler of the function named function (its folder under functions/) over
// s: the tests pick a function by name, with what they choose to give it.
func (a *API) Function(function string, s Services) (Handler, error) {
	for _, r := range Functions() {
		if r.Function == function {
			return a.on(s).serve(r), nil
		}
	}
	return nil, fmt.Errorf("apigw: no function %q serves an operation", function)
}
