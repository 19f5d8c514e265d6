from benchwright.cli.main import main

main()
