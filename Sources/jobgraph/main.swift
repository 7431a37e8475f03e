import JobGraphCLI

await Entrypoint.main()
