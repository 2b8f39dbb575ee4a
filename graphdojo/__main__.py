from graphdojo.cli import main

raise SystemExit(main())
