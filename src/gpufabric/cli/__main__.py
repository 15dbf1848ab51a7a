from gpufabric.cli.app import main

main()
