namespace lancelet::format {}
