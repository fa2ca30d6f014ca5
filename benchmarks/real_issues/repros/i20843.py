import torch
torch.save(torch.cuda.get_rng_state(), 'cuda_rng_state.tch')
torch.save(torch.get_rng_state(), 'rng_state.tch')
