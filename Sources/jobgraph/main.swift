import JobGraphCLI

Entrypoint.prepareSignals()
await Entrypoint.main()
