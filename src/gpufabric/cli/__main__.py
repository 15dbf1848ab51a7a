from gpufabric.cli.entry import main

main()
