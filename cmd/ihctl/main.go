// Command ihctl is the operator's command line over the interrupt host's API (package
// operator; docs/operations.md, "ihctl").
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"

	"github.com/interrupthost/interrupthost/pkg/operator"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := operator.Run(ctx, os.Args[1:], os.Getenv, operator.IO{In: os.Stdin, Out: os.Stdout})
	switch {
	case err == nil, errors.Is(err, context.Canceled):
		return
	case errors.Is(err, operator.ErrUsage):
		fmt.Fprintf(os.Stderr, "%v\n\n%s", err, operator.Usage)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "ihctl:", err)
		os.Exit(1)
	}
}
