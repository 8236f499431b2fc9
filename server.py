#!/usr/bin/env python3
"""Start the Feudo gRPC services, Advisor and Matches (flags, logging and signals: feudo_ai/wire/cli.py; the server:
feudo_ai/wire/server.py).

    python server.py                         # 127.0.0.1:50051, plaintext, no token
    python server.py --address 0.0.0.0:50051 --tls-cert cert.pem --tls-key key.pem --token-file token.txt

Same as ``feudo serve``; ``python server.py --help`` lists the flags.
"""

import sys

from feudo_ai.wire.cli import main

if __name__ == "__main__":
    sys.exit(main())
