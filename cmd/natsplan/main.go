// Command natsplan makes NATS JetStream topology declarative: HCL files in, a reviewed
// plan against the live server, and an apply that does exactly that plan.
package main

import "os"

func main() { os.Exit(run(os.Args[1:], newSystemIO(), os.Getenv)) }
