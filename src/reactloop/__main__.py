from reactloop.cli import main

main()
