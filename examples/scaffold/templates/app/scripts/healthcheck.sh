#!/bin/sh
curl -sf http://localhost:[[ data.port ]]/health || exit 1
