// Command discovery serves GET /.well-known/interrupt-host. It needs nothing but its
// environment, and links no AWS client.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/environ"
)

func main() {
	api, err := environ.DiscoveryAPI()
	environ.ExitOn(err)
	lambda.Start(api.Discovery())
}
