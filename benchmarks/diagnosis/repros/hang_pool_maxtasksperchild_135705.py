from multiprocessing import get_context
from torch import randn

def worker(i):
    result = randn(1)
    print(f'Task {i} result is {result}')
    # Doesn't work
    return result
    # # This works
    # return result.detach().numpy()

if __name__ == '__main__':
    # Doesn't work
    with get_context('fork').Pool(1, maxtasksperchild=1) as exe:
    # # This works
    # with get_context('fork').Pool(1, maxtasksperchild=None) as exe:
        results = exe.map(worker, range(10), chunksize=1)
