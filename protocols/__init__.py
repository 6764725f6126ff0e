"""The wire protocols the platform speaks, one package each: a transport parses its protocol, calls the platform's
services, renders their results in its own shape and follows the publication for the matches its clients hold. A
protocol imports the platform; the platform never imports a protocol."""
