print("jobgraph")
