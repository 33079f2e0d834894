from lowtide.cli.main import main

main()
